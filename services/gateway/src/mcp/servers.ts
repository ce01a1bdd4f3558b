/**
 * The two tool servers and the tools each one serves. A server is built afresh for every HTTP
 * request (stateless Streamable HTTP), so its tools close over that request's context.
 */
import { OPERATION_IDS, OPERATIONS, type OperationId } from '@svc/contracts';
import type { McpServer } from '@modelcontextprotocol/server';
import { loadMcpSdk } from './sdk.ts';
import type { ToolContext } from './tool-result.ts';
import { registerFeedbackTool } from './tools-feedback.ts';
import { registerListTools } from './tools-lists.ts';
import { QR_SERVER_INSTRUCTIONS, registerQrTools } from './tools-qr.ts';
import { VERIFY_SERVER_INSTRUCTIONS, registerVerifyTools } from './tools-verify.ts';

export interface ToolServerDef {
  name: 'email-verify' | 'qr';
  /** The billable operations whose tools this server serves. */
  operations: readonly OperationId[];
  instructions: string;
  register(server: McpServer, context: ToolContext): void;
}

const operationsOf = (name: ToolServerDef['name']): OperationId[] =>
  OPERATION_IDS.filter((operation) => OPERATIONS[operation].toolServer === name);

export const TOOL_SERVERS: readonly ToolServerDef[] = [
  {
    name: 'email-verify',
    operations: operationsOf('email-verify'),
    instructions: VERIFY_SERVER_INSTRUCTIONS,
    register: (server, context) => {
      registerVerifyTools(server, context);
      registerListTools(server, context);
      registerFeedbackTool(server, context);
    },
  },
  { name: 'qr', operations: operationsOf('qr'), instructions: QR_SERVER_INSTRUCTIONS, register: registerQrTools },
];

export async function createToolServer(definition: ToolServerDef, context: ToolContext): Promise<McpServer> {
  const { McpServer } = await loadMcpSdk();
  // The tool lists never change while a server runs, and a 2026 client that is told they may
  // opens a `subscriptions/listen` stream after discovery: say so (the SDK's default is true).
  const server = new McpServer(
    { name: definition.name, version: '1.0.0' },
    { instructions: definition.instructions, capabilities: { tools: { listChanged: false } } },
  );
  definition.register(server, context);
  return server;
}
