// The config file's JSON Schema, from the option table (npm run schema writes it beside package.json).
import { OPTIONS, type Spec } from "./table.js";
import { DURATION, formatDuration } from "./value.js";

/** The JSON Schema of the config file, for editors (shipped as aicontrol-conformance.config.schema.json). */
export function configJsonSchema(): object {
  const type = (spec: Spec): object => {
    switch (spec.kind) {
      case "boolean":
        return { type: "boolean" };
      case "integer":
        return { type: "integer", ...(spec.min !== undefined ? { minimum: spec.min } : {}) };
      case "count":
        return { type: "integer", minimum: 1 };
      case "duration":
        return { type: "string", pattern: DURATION.source };
      case "list":
        return { anyOf: [{ type: "string" }, { type: "array", items: { type: "string" } }] };
      case "choice":
        return { enum: spec.choices };
      case "string":
        return { type: "string", minLength: 1 };
    }
  };
  const properties = Object.fromEntries(
    Object.entries(OPTIONS as Record<string, Spec>)
      .filter(([, s]) => !s.cliOnly)
      .map(([name, spec]) => {
        const unit = spec.kind === "duration" ? " (with a unit: 500ms, 2s, 1.5m, 1h)" : "";
        return [
          name,
          {
            ...type(spec),
            description: spec.description + unit,
            ...(spec.default !== undefined
              ? { default: spec.kind === "duration" ? formatDuration(spec.default as number) : spec.default }
              : {}),
          },
        ];
      }),
  );
  return {
    $schema: "http://json-schema.org/draft-07/schema#",
    title: "aicontrol-conformance config",
    type: "object",
    additionalProperties: false,
    properties,
  };
}
