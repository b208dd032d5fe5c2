# A plain, self-contained HTML page: no JavaScript, no external style, so
# the report opens from a cluster's file system or an e-mail attachment.

html_escape <- function(x) {
  x <- gsub("&", "&amp;", x, fixed = TRUE)
  x <- gsub("<", "&lt;", x, fixed = TRUE)
  gsub(">", "&gt;", x, fixed = TRUE)
}

format_cell <- function(x) {
  if (is.numeric(x)) {
    out <- ifelse(is.na(x), "", ifelse(x == round(x) & abs(x) < 1e12, format(x, scientific = FALSE,
      trim = TRUE), formatC(x, digits = 4, format = "g")))
    return(out)
  }
  ifelse(is.na(x), "", html_escape(as.character(x)))
}

html_table <- function(dt, caption = NULL) {
  if (is.null(dt) || nrow(dt) == 0) return("<p><em>none</em></p>")
  head <- paste0("<th>", html_escape(names(dt)), "</th>", collapse = "")
  cells <- lapply(dt, format_cell)
  rows <- do.call(paste0, c(lapply(cells, function(c) paste0("<td>", c, "</td>"))))
  paste0(
    "<table>", if (!is.null(caption)) paste0("<caption>", html_escape(caption), "</caption>"),
    "<thead><tr>", head, "</tr></thead><tbody>",
    paste0("<tr>", rows, "</tr>", collapse = "\n"), "</tbody></table>"
  )
}

html_list <- function(named) {
  items <- paste0("<li><b>", html_escape(names(named)), "</b>: ",
    html_escape(vapply(named, function(v) paste(format(v), collapse = " "), character(1))), "</li>")
  paste0("<ul>", paste(items, collapse = "\n"), "</ul>")
}

html_figure <- function(file, caption) {
  sprintf('<figure><img src="%s" alt="%s"><figcaption>%s</figcaption></figure>',
    file, html_escape(caption), html_escape(caption))
}

html_page <- function(title, body) {
  paste0(
    "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>", html_escape(title),
    "</title><style>",
    "body{font-family:sans-serif;max-width:70em;margin:auto;padding:1em}",
    "table{border-collapse:collapse;margin:1em 0;font-size:90%}",
    "td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}",
    "td:first-child{text-align:left}",
    # a table wider than the page scrolls on its own, the page does not
    "table{display:block;max-width:100%;overflow-x:auto}",
    "caption{text-align:left;font-weight:bold}img{max-width:100%}",
    ".verdict{font-size:120%;padding:.5em;border:2px solid #888}",
    "</style></head><body>\n<h1>", html_escape(title), "</h1>\n",
    paste(body, collapse = "\n"), "\n</body></html>\n"
  )
}
