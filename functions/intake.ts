import { lambdaDeps } from "../shared/lambda";
import { intakeHandler } from "../shared/pipeline/handlers";

export const handler = intakeHandler(lambdaDeps());
