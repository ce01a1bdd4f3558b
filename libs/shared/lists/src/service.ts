/**
 * `@svc/lists/service`: what the gateway's doors of lists (REST routes, MCP tools) call: the list
 * service (create, read, page, cancel), reading uploads (CSV, JSON), results in input order, and
 * the contract's refusals. The doors add only their transport's specifics. The CSV parser and
 * writer load with this entry, not with the package's main one.
 */
export { ListService, type ListLog, type ListOwner, type ListsDeps, type NewListInput } from './list-service.ts';
export { payloadTooLarge, readCsvUpload, type CsvUpload, type CsvUploadOptions } from './csv-upload.ts';
export { XLSX_MEDIA_TYPE, isZip, readXlsxUpload, type XlsxUploadOptions } from './xlsx-upload.ts';
export { csvResults, jsonResults, pendingOf, resultsPage, type EntryResult, type NotVerifiedResult } from './list-results.ts';
export { PARAMETER_MESSAGES, jsonInput, listBodyError, parameterError } from './list-input.ts';
export { tooManyAddresses } from './list-builder.ts';
