export { createVerifyHandler, createVerifier, type VerifyHandlerOptions } from './handler.ts';
