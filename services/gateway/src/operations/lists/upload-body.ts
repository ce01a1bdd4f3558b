/**
 * The body of `POST /v1/email-verify/lists` as fastify validates it per media type: the JSON
 * object, or the CSV file or workbook as a stream (read by the route's handler), and what the
 * OpenAPI document says of each.
 */
import { ApiError, listCreateBodySchema } from '@svc/contracts';
import { XLSX_MEDIA_TYPE, listBodyError } from '@svc/lists/service';
import { LIST_CREATE_EXAMPLE, LIST_UPLOAD_EXAMPLE } from '../../openapi-examples.ts';
import { csvStreamSchema } from '../../openapi-schemas.ts';
import { validated } from '../../plugins/validation.ts';

const csvUpload = validated(
  csvStreamSchema(
    "The file as it is: RFC 4180, `,`, `;` or tab separated; UTF-8 with or without BOM, UTF-16 with a BOM (Excel's " +
      '"Unicode text"), else Windows-1252 for a file that is not UTF-8; a `charset` on the Content-Type wins. The address ' +
      'column is `?column=`, else the one whose header names an address (`Email`, `E-mail Address`, `Work Email`, ' +
      '`E-Mail-Adresse`, `Courriel`, ...), else the one whose cells look like addresses. Rows without an address are kept ' +
      'in the CSV results and are no entries. Other columns are kept and returned.',
  ).meta({ examples: [LIST_UPLOAD_EXAMPLE] }),
  () => new ApiError('invalid_request', 'The CSV body could not be read.'),
);

const xlsxUpload = validated(
  csvStreamSchema(
    'An Excel workbook (.xlsx, up to 16 MiB): its first sheet is read like a CSV file (the address column found the same way, other ' +
      'columns kept and returned in a CSV). A workbook that inflates to more than 128 MiB is refused `413`.',
  ),
  () => new ApiError('invalid_request', 'The workbook could not be read.'),
);

export const uploadBody = {
  content: {
    'application/json': { schema: validated(listCreateBodySchema.meta({ examples: [LIST_CREATE_EXAMPLE] }), listBodyError) },
    'text/csv': { schema: csvUpload },
    'application/csv': { schema: csvUpload },
    [XLSX_MEDIA_TYPE]: { schema: xlsxUpload },
  },
};
