"""The fleet at a date, answered from the log (docs/reports.md, "The fleet at a date").

query        fleet_at(session, as_of) -> FleetAt: the manifests tracked at as_of, each
             with the decision current for it then, and the matrix version and policy
             revision in force: the one query every view of the past is built on
report       counts by verdict, by rule and by owner of a FleetAt, as JSON views and CSV
compare      verdict_changes(earlier, later): what changed verdict between two dates
services     FleetService: as_of parsed and checked, pages of manifests, the report
controllers  GET /v1/reports/fleet (GET /v1/manifests?as_of= is the manifests controller's)
"""
