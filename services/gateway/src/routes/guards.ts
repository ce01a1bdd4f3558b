/** Routes that need a key say so in their OpenAPI operation. */
export const BEARER_SECURITY = [{ bearerAuth: [] }];
