# How findings are written: the texts messages quote. (Every concern's deny and warn sets hold
# {"rule", "path", "message"} objects, written out in each rule's head.)
package supportgate.lib.report

# text renders the value at `keys` below `doc` for a message ("not stated" if absent).
text(doc, keys) := sprintf("%v", [object.get(doc, keys, "not stated")])

# list_text renders a list of values for a message.
list_text(values) := concat(", ", [sprintf("%v", [v]) | some v in values])
