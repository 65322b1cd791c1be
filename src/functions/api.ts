import { handle } from "hono/aws-lambda";
import { createApp } from "../api/app";
import { lambdaDeps, lazy } from "../runtime/lambda";

export const handler = lazy(() => handle(createApp(lambdaDeps())));
