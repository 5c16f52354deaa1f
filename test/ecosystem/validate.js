// node validate.js SCHEMA JSON [ALLOW_JSON]
// Validates JSON against a JSON schema with ajv. ALLOW_JSON: a list of
// {"path": regex, "key": name} for additionalProperties errors that are
// accepted (datasource-specific fields a generated schema does not list).
const Ajv = require('ajv');
const addFormats = require('ajv-formats');
const fs = require('fs');
const [schemaFile, dataFile, allowFile] = process.argv.slice(2);
const ajv = new Ajv({ allErrors: true, strict: false, unicodeRegExp: true });
addFormats(ajv);
const validate = ajv.compile(JSON.parse(fs.readFileSync(schemaFile, 'utf8')));
validate(JSON.parse(fs.readFileSync(dataFile, 'utf8')));
const allow = allowFile ? JSON.parse(fs.readFileSync(allowFile, 'utf8')) : [];
const errors = (validate.errors || []).filter(e => !(e.keyword === 'additionalProperties' &&
	allow.some(a => new RegExp(a.path).test(e.instancePath) && a.key === e.params.additionalProperty)));
for (const e of errors)
	console.log(`${dataFile}${e.instancePath}: ${e.message} ${JSON.stringify(e.params)}`);
process.exit(errors.length ? 1 : 0);
