/**
 * The API key lives in this tab's sessionStorage only: never in a URL, a cookie or localStorage,
 * so it leaves with the tab and is never sent anywhere but the Authorization header.
 */
const KEY = 'console.apiKey';

export const currentKey = (): string | null => sessionStorage.getItem(KEY);
export const signIn = (key: string): void => sessionStorage.setItem(KEY, key);
export const signOut = (): void => sessionStorage.removeItem(KEY);
