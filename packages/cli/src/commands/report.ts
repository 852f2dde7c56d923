/** `report roi`: the printable ROI report (HTML, self-contained) to `--out FILE`. */
import * as Sdk from "@agent-platform/sdk"
import { Option } from "effect"
import { Command, Flag } from "effect/cli"
import { outFlag, saveDownload } from "./export.ts"

const roi = Command.make(
  "roi",
  {
    days: Flag.Int("days").pipe(
      Flag.withDescription("The period in days up to today, 1 to 365 (default 30)"),
      Flag.optional
    ),
    out: outFlag
  },
  ({ days, out }) =>
    saveDownload(out, (options) => Sdk.downloadRoiReport(options, { days: Option.getOrUndefined(days) }))
).pipe(Command.withDescription("Write the ROI report, a printable HTML page (admin)"))

export const report = Command.make("report").pipe(
  Command.withDescription("Reports (admin)"),
  Command.withSubcommands([roi])
)
