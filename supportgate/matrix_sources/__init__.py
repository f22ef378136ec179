"""Following the support matrix where it is kept: a git repository or an https URL
(docs/matrix-sources.md); the scheduler polls, and publishing is the matrix domain's."""
