import { ecsEventsHandler } from "../pipeline/ecs-events";
import { lazy } from "../runtime/lambda";
import { lambdaDeps } from "../runtime/lambda-pipeline";

export const handler = lazy(() => ecsEventsHandler(lambdaDeps()));
