"""The fleet as an OSCAL Assessment Results document (docs/reports.md#oscal).

`fleet.py` is the plain input (the tracked manifests at a time, each with its decision then
current, and the matrix version and policy revision then in force); `document.py` turns it
into the document, a pure function; `services.py` gathers the input; `controllers.py`
answers `GET /v1/reports/oscal`. `supportgate report oscal` prints the same document.
"""
