"""Following the support matrix where it is kept: a git repository or an https URL
(SUPPORTGATE_MATRIX_SOURCE, docs/matrix-sources.md). The scheduler
(supportgate/reevaluation/schedule.py) polls; publishing is the matrix domain's.
"""
