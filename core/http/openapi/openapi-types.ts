/** The parts of OpenAPI 3.1 the kernel writes; schemas are JSON Schema 2020-12 objects. */
export type JsonSchema = { [keyword: string]: unknown };

export type HttpMethod = 'get' | 'post' | 'put' | 'delete';

/** Who may call a route: any token (`reader`), an administrator's, or no token at all. */
export type RouteRole = 'reader' | 'admin' | 'public';

export interface DocumentedResponse {
  description: string;
  /** JSON body; absent for an empty one (204). */
  schema?: JsonSchema;
  /** Other media types than application/json (an event stream, a page, files). */
  mediaType?: string | readonly string[];
  headers?: Record<string, { description: string; schema: JsonSchema }>;
}

export interface QueryParameter {
  name: string;
  description: string;
  schema: JsonSchema;
}

/** One route as the document describes it; the Hono app is checked against this list by a test. */
export interface RouteDoc {
  method: HttpMethod;
  /** OpenAPI template: `/api/jobs/{id}`. */
  path: string;
  operationId: string;
  summary: string;
  tag: string;
  role: RouteRole;
  description?: string;
  query?: QueryParameter[];
  /** The same schema the route validates its body with. */
  body?: JsonSchema;
  responses: Record<number, DocumentedResponse>;
  /** Error codes this route answers beyond those every route may (bad token, bad body, internal). */
  errors?: string[];
}

export interface OpenApiDocument {
  openapi: '3.1.0';
  info: { title: string; version: string; description: string };
  servers: { url: string }[];
  security: Record<string, string[]>[];
  tags: { name: string; description: string }[];
  paths: Record<string, Record<string, unknown>>;
  components: { schemas: Record<string, JsonSchema>; securitySchemes: Record<string, unknown>; responses: Record<string, unknown> };
  [extension: `x-${string}`]: unknown;
}
