import { handle } from "hono/aws-lambda";
import { createApp } from "../shared/http/app";
import { lambdaDeps } from "../shared/lambda";

export const handler = handle(createApp(lambdaDeps()));
