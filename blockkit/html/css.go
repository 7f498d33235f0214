package html

import (
	"html/template"
	"io"
)

// CSS styles the classes the renderer's markup uses, for a Slack-like look:
// Slack's fonts and colours, monospace code, grey-barred quotes, bordered
// tables, Slack's button styles and small grey context text. Put it in a
// <style> element of any page that shows rendered messages.
// Nested rich text lists cycle Slack's bullet and number styles every three
// levels, up to maxIndent.
const CSS = `.bk-message{font-family:Slack-Lato,Lato,"Helvetica Neue",Helvetica,"Segoe UI",Tahoma,Arial,sans-serif;font-size:15px;line-height:1.46668;color:#1d1c1d;max-width:720px;padding:8px 20px;margin:0 0 12px;border-bottom:1px solid #e8e8e8;overflow-wrap:anywhere}
.bk-message a.bk-link{color:#1264a3;text-decoration:none}
.bk-message a.bk-link:hover{text-decoration:underline}
.bk-link-refused{color:#616061;text-decoration:underline dotted}
.bk-header{font-size:18px;font-weight:900;line-height:1.33;margin:8px 0 4px}
.bk-section{display:flex;gap:12px;align-items:flex-start;margin:4px 0}
.bk-section-body{flex:1 1 auto;min-width:0}
.bk-mrkdwn,.bk-plain,.bk-rt-section{white-space:pre-wrap}
.bk-fields{display:grid;grid-template-columns:1fr 1fr;gap:8px 16px;margin-top:4px}
.bk-accessory{flex:0 0 auto}
.bk-accessory-img{width:88px;height:88px;object-fit:cover;border-radius:6px}
.bk-context{display:flex;flex-wrap:wrap;align-items:center;gap:4px 8px;font-size:12px;line-height:1.5;color:#616061;margin:4px 0}
.bk-context-img{width:20px;height:20px;border-radius:4px;object-fit:cover}
.bk-divider{border:0;border-top:1px solid #dddddd;margin:12px 0}
.bk-image{margin:8px 0}
.bk-image-title{font-size:13px;color:#616061;margin-bottom:4px}
.bk-image-img{max-width:100%;max-height:360px;border-radius:8px}
.bk-image-missing{display:inline-block;color:#616061;background:#f8f8f8;border:1px dashed #dddddd;border-radius:4px;padding:2px 6px;font-size:13px}
.bk-code{font-family:Monaco,Menlo,Consolas,"Courier New",monospace;font-size:12px;color:#c01343;background:#f6f6f6;border:1px solid #dddddd;border-radius:3px;padding:1px 3px;white-space:pre-wrap}
.bk-pre{font-family:Monaco,Menlo,Consolas,"Courier New",monospace;font-size:12px;line-height:1.5;background:#f8f8f8;border:1px solid #dddddd;border-radius:4px;padding:8px;margin:4px 0;white-space:pre-wrap;overflow-wrap:anywhere}
.bk-quote{border-left:4px solid #dddddd;padding-left:12px;margin:4px 0;white-space:pre-wrap}
.bk-li{display:inline-block}
.bk-mention{color:#1264a3;background:rgba(29,155,209,.1);border-radius:3px;padding:0 2px}
.bk-mention-broadcast{color:#8f6000;background:rgba(242,199,68,.4)}
.bk-emoji{font-style:normal}
.bk-date{text-decoration:underline dotted}
.bk-color{font-family:Monaco,Menlo,Consolas,monospace;font-size:12px}
.bk-actions{display:flex;flex-wrap:wrap;gap:8px;margin:8px 0}
.bk-button{display:inline-block;font:inherit;font-size:14px;font-weight:700;line-height:1;height:28px;padding:0 12px;border:1px solid rgba(29,28,29,.3);border-radius:4px;background:#ffffff;color:#1d1c1d;cursor:pointer;text-decoration:none;box-sizing:border-box;display:inline-flex;align-items:center}
.bk-button:hover{background:#f8f8f8}
.bk-button-primary{background:#007a5a;border-color:#007a5a;color:#ffffff}
.bk-button-primary:hover{background:#148567}
.bk-button-danger{background:#e01e5a;border-color:#e01e5a;color:#ffffff}
.bk-button-danger:hover{background:#e23067}
.bk-context-actions{display:flex;gap:2px;margin-top:4px}
.bk-feedback,.bk-icon-button{display:inline-flex;align-items:center;justify-content:center;width:28px;height:28px;padding:0;border:0;border-radius:6px;background:transparent;color:#616061;cursor:pointer}
.bk-feedback:hover,.bk-icon-button:hover{background:rgba(29,28,29,.08);color:#1d1c1d}
.bk-table-wrap{overflow-x:auto;margin:8px 0}
.bk-table{border-collapse:collapse;font-size:14px}
.bk-table caption{text-align:left;font-weight:700;padding:4px 0}
.bk-table td,.bk-table th{border:1px solid #dddddd;padding:4px 8px;text-align:left;vertical-align:top;white-space:nowrap}
.bk-table th{background:#f8f8f8;font-weight:700}
.bk-table .bk-wrap{white-space:normal}
.bk-table .bk-align-center{text-align:center}
.bk-table .bk-align-right{text-align:right}
.bk-table .bk-rich,.bk-table .bk-rt-section{display:inline}
.bk-rt-list{margin:0;padding-left:24px}
.bk-unsupported{color:#616061;background:#f8f8f8;border:1px dashed #bbbbbb;border-radius:4px;padding:4px 8px;margin:4px 0;font-size:13px}
.bk-unsupported.bk-inline{display:inline;padding:0 4px}
.bk-error{color:#8b0000;background:#fff0f0;border:1px solid #e01e5a;border-radius:4px;padding:6px 8px;margin:4px 0;font-size:13px}
.bk-error-raw{white-space:pre-wrap;font-family:Monaco,Menlo,Consolas,monospace;font-size:12px;margin:4px 0 0}
ul.bk-indent-0{margin-left:0px;list-style-type:disc}
ol.bk-indent-0{margin-left:0px;list-style-type:decimal}
ul.bk-indent-1{margin-left:24px;list-style-type:circle}
ol.bk-indent-1{margin-left:24px;list-style-type:lower-alpha}
ul.bk-indent-2{margin-left:48px;list-style-type:square}
ol.bk-indent-2{margin-left:48px;list-style-type:lower-roman}
ul.bk-indent-3{margin-left:72px;list-style-type:disc}
ol.bk-indent-3{margin-left:72px;list-style-type:decimal}
ul.bk-indent-4{margin-left:96px;list-style-type:circle}
ol.bk-indent-4{margin-left:96px;list-style-type:lower-alpha}
ul.bk-indent-5{margin-left:120px;list-style-type:square}
ol.bk-indent-5{margin-left:120px;list-style-type:lower-roman}
ul.bk-indent-6{margin-left:144px;list-style-type:disc}
ol.bk-indent-6{margin-left:144px;list-style-type:decimal}
ul.bk-indent-7{margin-left:168px;list-style-type:circle}
ol.bk-indent-7{margin-left:168px;list-style-type:lower-alpha}
ul.bk-indent-8{margin-left:192px;list-style-type:square}
ol.bk-indent-8{margin-left:192px;list-style-type:lower-roman}
`

var pageTemplate = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body{margin:0;padding:16px;background:#ffffff}
{{.CSS}}</style>
</head>
<body>
{{range .Messages}}{{.}}
{{end}}</body>
</html>
`))

// Page writes a standalone HTML document showing messages (each from
// Message) with CSS, titled title.
func Page(w io.Writer, title string, messages []template.HTML) error {
	return pageTemplate.Execute(w, struct {
		Title    string
		CSS      template.CSS
		Messages []template.HTML
	}{title, template.CSS(CSS), messages})
}
