package main

import (
	"bytes"
	"testing"

	"github.com/mmcdole/gofeed"
)

// FuzzFeed feeds the RSS, Atom and JSON feed parser arbitrary documents, and what it parses
// through the plugin's own steps (order, key, text, memory text): nothing panics.
func FuzzFeed(f *testing.F) {
	for _, s := range []string{
		`<?xml version="1.0"?><rss version="2.0"><channel><title>T</title><item><title>A</title><link>https://x/a</link><guid>a</guid><pubDate>Mon, 02 Jan 2026 15:04:05 GMT</pubDate><description>&lt;p&gt;hi&lt;/p&gt;</description></item><item><title>B</title></item></channel></rss>`,
		`<feed xmlns="http://www.w3.org/2005/Atom"><title>A</title><entry><id>1</id><title>新闻</title><updated>2026-01-02T03:04:05Z</updated><content type="html">&lt;b&gt;x&lt;/b&gt;</content></entry></feed>`,
		`{"version":"https://jsonfeed.org/version/1.1","title":"J","items":[{"id":"1","content_text":"t","date_published":"2026-01-01T00:00:00Z"}]}`,
		`<rss><channel><item><pubDate>not a date</pubDate></item><item><pubDate>Mon, 02 Jan 2026 15:04:05 GMT</pubDate></item></channel></rss>`,
		`<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/"><item><title>r</title></item></rdf:RDF>`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		feed, err := gofeed.NewParser().Parse(bytes.NewReader(data))
		if err != nil || feed == nil {
			return
		}
		for _, it := range oldestFirst(feed.Items) {
			if it == nil {
				continue
			}
			_ = itemKey(it)
			text := itemText(it)
			_ = memoryText(feed.Title, it, Summary{Text: text, Mode: modeExcerpt})
		}
	})
}
