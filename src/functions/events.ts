import { eventsHandler } from "../pipeline/handlers";
import { lambdaDeps, lazy } from "../runtime/lambda";

export const handler = lazy(() => eventsHandler(lambdaDeps()));
