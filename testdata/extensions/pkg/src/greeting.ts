export function greeting(name: string): string {
	return `Greetings from ${name}`;
}
