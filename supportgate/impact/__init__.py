"""What a proposed support matrix would change: every tracked manifest evaluated under the
current and the proposed matrix (POST /v1/matrix/impact, the console's impact page). Above
matrix/, evaluations/, waivers/ and reevaluation/'s tracked-manifest source, which it reads."""
