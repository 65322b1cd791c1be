import { lambdaDeps } from "../shared/lambda";
import { sweep } from "../shared/pipeline/sweeper";

export const handler = async () => sweep(lambdaDeps());
