/**
 * Text the database can store. PostgreSQL `text` cannot hold the NUL
 * character (U+0000), which JSON allows: a field that is stored or compared
 * in SQL refuses it up front (400 naming the field) instead of failing in
 * the database.
 */
import { Schema } from "effect"

/** The check: no NUL character. */
export const isStorable = Schema.isPattern(/^[^\u0000]*$/, { message: "must not contain NUL (\\u0000) characters" })

/** A string without NUL characters. */
export const StorableString = Schema.String.check(isStorable)
