module github.com/hologramagent/hologram

go 1.26

require (
	github.com/BurntSushi/toml v1.6.0
	github.com/kljensen/snowball v0.10.0
	github.com/mattn/go-sqlite3 v1.14.53
	github.com/yanyiwu/gojieba v1.4.6
)
