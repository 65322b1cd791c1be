// What the Node program sees of the browser script (dashboard-script.js): it is type-checked with
// the DOM on its own (tsconfig.dashboard.json), so the DOM's types stay out of the server's code.

/** The dashboard's browser script, self-contained: dashboard.ts serves its source. */
export declare function dashboardMain(): void;
