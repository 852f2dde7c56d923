/** Schema failures in words a user can act on: `field.path: message; other: message`. */
import { SchemaIssue } from "effect"

const formatSchemaIssue = SchemaIssue.makeFormatterStandardSchemaV1()

export const describeSchemaError = (issue: SchemaIssue.Issue): string =>
  formatSchemaIssue(issue).issues
    .map(({ message, path }) =>
      path === undefined || path.length === 0
        ? message
        : `${
          path.map((segment) => (typeof segment === "object" ? String(segment.key) : String(segment))).join(".")
        }: ${message}`
    )
    .join("; ")
