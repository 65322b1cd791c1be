import { handle } from "hono/aws-lambda";
import { createApp } from "../shared/http/app";
import { lambdaDeps, lazy } from "../shared/lambda";

export const handler = lazy(() => handle(createApp(lambdaDeps())));
