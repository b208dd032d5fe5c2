# The report's HTML, built with htmltools: one self-contained page (its
# style and its one small script inline, no network), so the report opens
# from a cluster's file system or an e-mail attachment, and prints.

# Tables of more rows than this get a search box and sortable headers;
# printed, they show their first print_rows_max rows (the page puts the
# noisiest first), so a report of 8,192 CPUs prints as a few pages.
table_rows_searchable <- 15
print_rows_max <- 30

html_escape <- function(x) htmltools::htmlEscape(x)

# dt: the rows to show (names as column_words knows them); caption: words;
# csv: the file holding every row and column, linked under the table.
html_table <- function(dt, caption = NULL, csv = NULL,
                       searchable = nrow(dt) > table_rows_searchable) {
  # a table with no row is left out: a reader has nothing to read in it
  if (is.null(dt) || nrow(dt) == 0) return("")
  force(searchable)
  dt <- drop_empty_columns(dt)
  cells <- lapply(dt, format_cell)
  numeric_col <- vapply(dt, is.numeric, TRUE)
  header <- htmltools::tags$tr(lapply(seq_along(dt), function(j) {
    htmltools::tags$th(header_words(names(dt)[j]), class = if (numeric_col[j]) "num")
  }))
  # the rows pasted, not a tag a cell: a row a CPU of 8,192 ranks stays quick
  td <- lapply(seq_along(cells), function(j) {
    paste0(if (numeric_col[j]) '<td class="num">' else "<td>", html_escape(cells[[j]]), "</td>")
  })
  rows <- htmltools::HTML(paste0("<tr>", do.call(paste0, td), "</tr>", collapse = "\n"))
  table <- htmltools::tags$table(
    class = if (searchable) "long" else if (nrow(dt) <= 8) "short",
    if (!is.null(caption)) htmltools::tags$caption(caption),
    htmltools::tags$thead(header), htmltools::tags$tbody(rows))
  out <- as.character(table)
  if (searchable && nrow(dt) > print_rows_max) {
    out <- paste0(out, sprintf(paste('<p class="print-only">Printed: the first %d of these',
      "%s rows%s.</p>"), print_rows_max, format_number(nrow(dt)),
      if (!is.null(csv)) paste0("; every row is in ", csv) else ""))
  }
  if (!is.null(csv)) {
    out <- paste0(out, as.character(htmltools::p(class = "csv", "Every row and column: ",
      htmltools::a(href = csv, csv))))
  }
  out
}

# A table of two columns: what, and its value (the machine's description).
html_list <- function(named) {
  values <- vapply(named, function(v) paste(format_cell(v), collapse = " "), character(1))
  html_table(data.table(item = names(named), value = values), searchable = FALSE)
}

html_plot <- function(file, caption) {
  as.character(htmltools::tags$figure(htmltools::tags$img(src = file, alt = caption),
    htmltools::tags$figcaption(caption)))
}

# A section that starts a printed page.
html_section <- function(id, title, ...) {
  c(sprintf('<section id="%s">', id), as.character(htmltools::h2(title)), ..., "</section>")
}

page_style <- paste(
  "body{font-family:sans-serif;max-width:1150px;margin:auto;padding:0 1em;line-height:1.35}",
  "h1{font-size:150%;margin-bottom:0}.version{color:#555;margin-top:.2em}",
  "table{border-collapse:collapse;margin:1em 0;font-size:90%;max-width:100%}",
  "td,th{border:1px solid #ccc;padding:2px 6px;text-align:left;vertical-align:top}",
  # a long word (a path, a list of threads) breaks rather than widens the page
  "td{overflow-wrap:break-word}",
  "td.num{text-align:right;white-space:nowrap}th.num{text-align:right}",
  "td:first-child{white-space:nowrap}",
  "caption{text-align:left;font-weight:bold;padding-bottom:.3em}",
  "img{max-width:100%}figure{margin:1em 0}figcaption{font-size:90%;color:#333}",
  ".system{display:flex;gap:1.5em;align-items:flex-start;margin-bottom:1em}",
  ".system .words{flex:1 1 40%;font-size:105%}.system figure{flex:1 1 60%;margin:0}",
  ".verdict{font-weight:bold}.csv{font-size:85%;margin-top:-.6em}",
  "input.search{margin:.3em 0;padding:2px 4px}th{cursor:default}table.long th{cursor:pointer}",
  ".print-only{display:none}@page{size:A4;margin:14mm}",
  "@media print{body{max-width:none;font-size:10pt}section{break-before:page}",
  "section:first-of-type{break-before:auto}figure,tr,.system,table.short{break-inside:avoid}",
  # on paper a long word breaks anywhere rather than cut the table at the margin
  "td{overflow-wrap:anywhere}",
  "input.search{display:none}.system{display:block}.print-only{display:block}",
  sprintf("table.long tbody tr:nth-child(n+%d){display:none}}", print_rows_max + 1)
)

# Long tables: a search box above each and headers that sort on a click,
# numbers as numbers. Plain DOM, nothing fetched.
page_script <- paste(
  "document.querySelectorAll('table.long').forEach(function(t){",
  "var body=t.tBodies[0],rows=Array.from(body.rows),box=document.createElement('input');",
  "box.className='search';box.placeholder='search '+rows.length+' rows';",
  "t.parentNode.insertBefore(box,t);",
  "box.addEventListener('input',function(){var q=box.value.toLowerCase();",
  "rows.forEach(function(r){r.style.display=r.textContent.toLowerCase().indexOf(q)<0?'none':''})});",
  "Array.from(t.tHead.rows[0].cells).forEach(function(h,k){var up=true;",
  "h.addEventListener('click',function(){var num=function(s){return parseFloat(s.replace(/,/g,''))};",
  "rows.sort(function(a,b){var x=a.cells[k].textContent,y=b.cells[k].textContent,",
  "p=num(x),q=num(y),c=(isNaN(p)||isNaN(q))?x.localeCompare(y):p-q;return up?c:-c});",
  "up=!up;rows.forEach(function(r){body.appendChild(r)})})})});"
)

html_page <- function(title, body, subtitle = NULL) {
  # the head as text: htmltools lifts a tags$head out of what it renders
  head <- paste0('<head><meta charset="utf-8"><meta name="viewport" content="width=device-width">',
    "<title>", html_escape(title), "</title><style>", page_style, "</style></head>")
  page <- htmltools::tags$body(htmltools::h1(title),
    if (!is.null(subtitle)) htmltools::p(class = "version", htmltools::HTML(subtitle)),
    htmltools::HTML(paste(unlist(body), collapse = "\n")),
    htmltools::tags$script(htmltools::HTML(page_script)))
  paste0("<!DOCTYPE html>\n<html lang=\"en\">", head, "\n", as.character(page), "\n</html>\n")
}
