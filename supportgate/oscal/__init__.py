"""The fleet as an OSCAL Assessment Results document (docs/reports.md#oscal):
`GET /v1/reports/oscal` and `supportgate report oscal`.
"""
