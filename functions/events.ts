import { lambdaDeps, lazy } from "../shared/lambda";
import { eventsHandler } from "../shared/pipeline/handlers";

export const handler = lazy(() => eventsHandler(lambdaDeps()));
