// gen.js writes node.json, what node's URL (a WHATWG URL parser) makes of
// each [base, input] of inputs.json, for TestResolveRefNode:
//
//	cd testdata/whatwg && node gen.js
//
// For each case: href, the URL's serialisation without its fragment and
// userinfo (which the crawler drops, and no request line holds); wire,
// the request-target a browser sends, the href after its origin (which is
// pathname and search, but for a query that is empty: search is then "",
// while the href, and the request line, keep the "?"); or failure, when
// the parser fails or the URL is not http(s).
"use strict";
const fs = require("fs");
const inputs = JSON.parse(fs.readFileSync(__dirname + "/inputs.json", "utf8"));
const out = [];
for (const [base, input] of inputs) {
	const c = { base, input };
	try {
		const u = base === "" ? new URL(input) : new URL(input, base);
		if (u.protocol !== "http:" && u.protocol !== "https:") {
			c.failure = true;
		} else {
			u.hash = "";
			u.username = "";
			u.password = "";
			c.href = u.href;
			c.wire = u.href.slice(u.origin.length);
		}
	} catch (e) {
		c.failure = true;
	}
	out.push(c);
}
fs.writeFileSync(__dirname + "/node.json", JSON.stringify({ node: process.version, cases: out }, null, 1) + "\n");
