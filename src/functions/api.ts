import { handle } from "hono/aws-lambda";
import { createApp } from "../api/app";
import { lambdaApiDeps, lazy } from "../runtime/lambda";

export const handler = lazy(() => handle(createApp(lambdaApiDeps())));
