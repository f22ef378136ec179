"""What a proposed support matrix would change (POST /v1/matrix/impact, the console's impact
page); above matrix/, evaluations/, waivers/ and reevaluation/'s source, which it reads."""
