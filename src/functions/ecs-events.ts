import { ecsEventsHandler } from "../pipeline/ecs-events";
import { lambdaDeps, lazy } from "../runtime/lambda";

export const handler = lazy(() => ecsEventsHandler(lambdaDeps()));
