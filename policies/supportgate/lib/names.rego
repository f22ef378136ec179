# Names as identities (CONTRACT section 10.5): engine names, model names and service
# providers compare without regard to case, with "-", "_" and spaces alike.
package supportgate.lib.names

# identity is the form two names are compared in: lower case, each run of "-", "_" and
# spaces one "-", none at either end ("DeepSeek Recipe", "deepseek_recipe" and
# "deepseek-recipe" are one identity).
identity(name) := trim(regex.replace(lower(name), `[-_ ]+`, "-"), "-")
