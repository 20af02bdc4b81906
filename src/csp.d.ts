export declare const MODEL_HOSTS: string[];
export declare const CSP: string;
