import { lambdaDeps } from "../shared/lambda";
import { eventsHandler } from "../shared/pipeline/handlers";

export const handler = eventsHandler(lambdaDeps());
