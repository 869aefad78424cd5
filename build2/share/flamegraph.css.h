static const char flamegraph_css[] =
	"text{font-family:Verdana,\"DejaVu Sans\",sans-serif;font-size:12px;fill:#000}\n"
	"#title{font-size:17px;text-anchor:middle}\n"
	"#subtitle{text-anchor:middle;fill:#555}\n"
	".btn{cursor:pointer;fill:#1a4d99}\n"
	".btn:hover{text-decoration:underline}\n"
	"#search,#matched{text-anchor:end}\n"
	"#frames>g{cursor:pointer}\n"
	"#frames>g:hover>rect{stroke:#000;stroke-width:0.5}\n"
	"#frames rect{rx:2px;ry:2px}\n"
	"#frames text{pointer-events:none}\n"
	".hid{display:none}\n"
	".anc{opacity:0.5}\n"
;
