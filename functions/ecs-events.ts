import { lambdaDeps, lazy } from "../shared/lambda";
import { ecsEventsHandler } from "../shared/pipeline/ecs-events";

export const handler = lazy(() => ecsEventsHandler(lambdaDeps()));
