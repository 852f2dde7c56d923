/** Documents the knowledge and chat tests ingest; tests assert on their facts (e.g. "14 business days"). */

/** A short returns policy: refunds take 14 business days. */
export const refundPolicy = [
  "# Returns and refunds",
  "",
  "Customers may return any unused item within 30 days of delivery. Items must be in their original packaging.",
  "",
  "Refunds are processed within 14 business days after the returned item reaches our warehouse."
].join("\n")

/** A shipping guide: standard shipping takes 3 to 5 working days. */
export const shippingGuide = [
  "# Shipping",
  "",
  "Standard shipping takes 3 to 5 working days inside the country. Express shipping arrives the next working day when ordered before noon.",
  "",
  "International parcels are shipped with tracking and usually arrive within 10 days. Customs fees are paid by the recipient."
].join("\n")
