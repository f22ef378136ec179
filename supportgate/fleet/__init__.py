"""The fleet at a date, answered from the log (docs/reports.md, "The fleet at a date"):
`query.fleet_at` is the one query every view of the past is built on."""
