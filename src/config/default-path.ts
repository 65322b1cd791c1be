// Where the config lives unless LISA_CONFIG says otherwise. A module of its own so that settings
// (read by every CLI command) can name it without loading the parser (yaml, zod).

export const DEFAULT_CONFIG_PATH = ".lisa/config.yaml";
