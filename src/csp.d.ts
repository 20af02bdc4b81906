export declare const MODEL_HOSTS: string[];
export declare const CSP: string;
export declare const CSP_HEADER: string;
export declare const SECURITY_HEADERS: Record<string, string>;
