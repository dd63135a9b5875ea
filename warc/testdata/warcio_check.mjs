// Reads WARC files with warcio.js (webrecorder), an independent reader, and
// prints one JSON line per record: its type, target URI, record id, HTTP
// status, the WARC digests it carries and the SHA-1 (base 32) of the
// payload and block as warcio reads them. Usage:
//
//	node warcio_check.mjs WARCIO_DIR FILE...
import { createReadStream } from "node:fs";
import { createHash } from "node:crypto";
import { pathToFileURL } from "node:url";
import path from "node:path";

const [dir, ...files] = process.argv.slice(2);
const { WARCParser } = await import(
  pathToFileURL(path.join(dir, "node_modules", "warcio", "dist", "index.js")).href
);

function base32(buf) {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  let bits = 0, value = 0, out = "";
  for (const b of buf) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += alphabet[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += alphabet[(value << (5 - bits)) & 31];
  while (out.length % 8) out += "=";
  return out;
}

const sha1 = (b) => "sha1:" + base32(createHash("sha1").update(b).digest());

for (const file of files) {
  for await (const record of WARCParser.iterRecords(createReadStream(file), { keepHeadersCase: true })) {
    const payload = await record.readFully(false);
    const h = record.warcHeaders;
    console.log(JSON.stringify({
      file: path.basename(file),
      type: record.warcType,
      uri: record.warcTargetURI ?? "",
      id: h.headers.get("WARC-Record-ID"),
      concurrentTo: h.headers.get("WARC-Concurrent-To") ?? "",
      status: Number(record.httpHeaders?.statusCode) || 0,
      payloadDigest: record.warcPayloadDigest ?? "",
      blockDigest: record.warcBlockDigest ?? "",
      payloadSHA1: sha1(payload),
      payloadLength: payload.length,
    }));
  }
}
