/**
 * Resource ids are UUIDs. An id that is not one names no resource: callers
 * answer 404 without asking the database (which would reject the cast).
 */
const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

export const isUuid = (id: string): boolean => uuidPattern.test(id)
