import { sweep } from "../pipeline/sweeper";
import { lambdaDeps } from "../runtime/lambda-pipeline";

export const handler = async () => sweep(lambdaDeps());
