module github.com/hologramagent/hologram

go 1.26

require github.com/mattn/go-sqlite3 v1.14.53 // indirect
