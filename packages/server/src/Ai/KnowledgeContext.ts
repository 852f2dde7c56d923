/**
 * How retrieved knowledge travels to a model: a block of excerpts in the
 * system message, each headed by its source file name. A hosted model reads
 * it as instructions; the embedded model parses it back with `parse`. One
 * format, declared here for both sides.
 */

/** A passage of a knowledge file given to the model. */
export interface Excerpt {
  readonly filename: string
  readonly content: string
}

const open = "<knowledge>"
const close = "</knowledge>"
const sourcePrefix = "[source: "

/** Removes what would break the block's framing from a file name or a passage. */
const clean = (text: string) => text.replaceAll(close, "").replaceAll(open, "")
const cleanName = (name: string) => clean(name).replace(/[\]\r\n]/g, " ").trim()

/**
 * The knowledge block of a system message: how to use it, then every excerpt
 * headed by `[source: <file name>]`. Empty excerpts say so, so a model knows
 * it has nothing to answer from.
 */
export const render = (excerpts: ReadonlyArray<Excerpt>): string => {
  const guidance = excerpts.length === 0
    ? "No knowledge excerpts matched this message. If it asks for facts, say plainly that you do not know."
    : "Answer from these knowledge excerpts when they are relevant and cite the file name you used, as (source: <file name>). If they do not contain the answer, say plainly that you do not know; never make facts up."
  const body = excerpts.map((excerpt) =>
    `${sourcePrefix}${cleanName(excerpt.filename)}]\n${clean(excerpt.content).trim()}`
  )
  return [guidance, open, ...body, close].join("\n")
}

/** The excerpts of every knowledge block in a text (a system message). */
export const parse = (text: string): Array<Excerpt> => {
  const excerpts: Array<Excerpt> = []
  let from = 0
  while (true) {
    const start = text.indexOf(open, from)
    if (start < 0) break
    const end = text.indexOf(close, start)
    const block = text.slice(start + open.length, end < 0 ? text.length : end)
    let current: { filename: string; lines: Array<string> } | undefined
    for (const line of block.split("\n")) {
      if (line.startsWith(sourcePrefix) && line.endsWith("]")) {
        if (current !== undefined) {
          excerpts.push({ filename: current.filename, content: current.lines.join("\n").trim() })
        }
        current = { filename: line.slice(sourcePrefix.length, -1), lines: [] }
      } else if (current !== undefined) {
        current.lines.push(line)
      }
    }
    if (current !== undefined) excerpts.push({ filename: current.filename, content: current.lines.join("\n").trim() })
    if (end < 0) break
    from = end + close.length
  }
  return excerpts
}
