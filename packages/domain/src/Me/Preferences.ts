/** The signed-in user's own preferences. */
import { Schema } from "effect"

export const Preferences = Schema.Struct({
  push_notifications: Schema.Boolean.annotate({ description: "Web Push of invitations; on by default (an opt-out)" })
}).annotate({ identifier: "Preferences" })
export type Preferences = typeof Preferences.Type

export const UpdatePreferences = Schema.Struct({ push_notifications: Schema.Boolean })
