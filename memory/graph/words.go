package graph

import (
	_ "embed"
	"strings"
)

// commonText is the list of common English words that are never names (see common.txt).
//
//go:embed common.txt
var commonText string

// common holds the words of common.txt.
var common = func() map[string]bool {
	m := map[string]bool{}
	for line := range strings.Lines(commonText) {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		for _, w := range strings.Fields(line) {
			m[w] = true
		}
	}
	return m
}()

// set makes a set of the space-separated words of s.
func set(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

var (
	// determiners are stripped from the start of an object.
	determiners = set("a an the my our his her their your its some this that these those " +
		"any each every another one's such both either")

	// cutWords end an object (when they are not its first word): conjunctions, clause starts,
	// prepositions, time words, fillers.
	cutWords = set("and but because cause cuz coz bc so which that who whom whose where when " +
		"while since as if though although or than until till after before whereas unless " +
		"i i'm i've i'd i'll im we you he she they it it's is was are were will would can could " +
		"should has had have do does did am been be being " +
		"in at on with for from about during into by near around over under through without to " +
		"like via " +
		"named called originally " +
		"yesterday today tonight tomorrow recently lately ago now again too also anymore already " +
		"last next every each this these right soon someday sometime once twice earlier later " +
		"ever always never lol haha hahaha lmao omg btw either anyway really very such lot lots " +
		"bit tons ton much together coming going " +
		"two three four five six seven eight nine ten several")

	// trailing words are stripped from the end of an object.
	trailing = set("a an the my our his her their your of to for with and or so very really more less most")

	// rejectFirst words cannot begin an object: pronouns and vague words.
	rejectFirst = set("it this that these those them him her you me us myself yourself himself " +
		"herself themselves ourselves everything anything something nothing everyone anyone " +
		"someone somebody nobody all what how why when where who which whether if there here so " +
		"too very much more lot lots way one ones thing things stuff being doing having getting " +
		"it's that's to be out up back not no yes just it'll with on in at for around outside about by " +
		"from into few couple")

	// goVerbs cannot follow "I went to" as a place ("I went to see a film").
	goVerbs = set("see get buy watch check pick meet visit do make have play help find take hang " +
		"grab sleep bed work eat talk sit try spend say show hear ask learn start stay go grab " +
		"relax chill celebrate catch bring")

	// relativeTime words make a useless object ("my birthday is tomorrow").
	relativeTime = set("yesterday today tonight tomorrow now soon later recently next last")
)

// Relations a person has ("my sister is Anna" → has sister), with their canonical names. Pets
// are animals, everyone else a person.
var relations = map[string]string{
	"best friend": "best friend", "sister": "sister", "brother": "brother", "mother": "mother",
	"mom": "mother", "mum": "mother", "father": "father", "dad": "father", "wife": "wife",
	"husband": "husband", "partner": "partner", "boyfriend": "boyfriend",
	"girlfriend": "girlfriend", "fiancée": "fiance", "fiancee": "fiance", "fiance": "fiance",
	"son": "son", "daughter": "daughter", "friend": "friend", "boss": "boss", "cousin": "cousin",
	"aunt": "aunt", "uncle": "uncle", "grandmother": "grandmother", "grandma": "grandmother",
	"grandfather": "grandfather", "grandpa": "grandfather", "niece": "niece", "nephew": "nephew",
	"roommate": "roommate", "colleague": "colleague", "coworker": "colleague",
	"neighbour": "neighbour", "neighbor": "neighbour", "teacher": "teacher", "mentor": "mentor",
	"therapist": "therapist", "doctor": "doctor", "baby": "baby", "kid": "child", "child": "child",
	"dog": "dog", "puppy": "dog", "cat": "cat", "kitten": "cat", "pet": "pet", "horse": "horse",
	"rabbit": "rabbit", "bunny": "rabbit", "bird": "bird", "parrot": "parrot",
	"hamster": "hamster", "turtle": "turtle", "snake": "snake", "guinea pig": "guinea pig",
}

// pets are the relations that are animals.
var pets = set("dog cat pet horse rabbit bird parrot hamster turtle snake")

// relationAlt is the regexp alternation of the relation words, longest first.
const relationAlt = `best friend|guinea pig|grandmother|grandfather|girlfriend|boyfriend|colleague|` +
	`coworker|neighbou?r|roommate|therapist|daughter|fianc(?:ée|ee|e)|brother|partner|husband|` +
	`grandma|grandpa|kitten|hamster|parrot|rabbit|turtle|sister|mother|father|friend|cousin|` +
	`nephew|mentor|teacher|doctor|uncle|bunny|niece|horse|puppy|snake|child|aunt|baby|boss|` +
	`bird|wife|mom|mum|dad|son|kid|dog|cat|pet`

// animals are object heads of kind animal.
var animals = set("dog dogs puppy puppies cat cats kitten kittens pet pets horse horses rabbit " +
	"rabbits bunny bird birds parrot hamster turtle snake fish goldfish guinea pig lizard cow " +
	"chicken chickens goat sheep")

// jobs are heads of "I'm a <job>" that make "works as".
var jobs = set("teacher nurse doctor engineer developer programmer designer artist writer author " +
	"chef cook lawyer accountant scientist researcher professor manager consultant analyst " +
	"architect photographer musician singer dancer painter actor actress pilot driver farmer " +
	"carpenter plumber electrician mechanic firefighter officer soldier police cop therapist " +
	"counselor counsellor psychologist dentist pharmacist veterinarian vet librarian journalist " +
	"editor reporter baker barista waiter waitress cashier clerk secretary assistant " +
	"receptionist salesperson entrepreneur founder ceo freelancer volunteer coach trainer " +
	"instructor tutor lecturer intern surgeon paramedic midwife banker broker realtor " +
	"translator interpreter tailor florist gardener janitor guard")

// notJobs end in a job-like suffix but are not jobs.
var notJobs = set("mother father brother sister daughter lover fan other member beginner " +
	"believer better bigger dreamer worrier survivor warrior winner loser sucker loner monster " +
	"newcomer foreigner stranger partner thinker doer fighter elephant giant tenant immigrant " +
	"computer number matter order answer wonder power water paper letter summer winter corner " +
	"center centre color colour error honor humor favor favour major minor neighbor neighbour " +
	"visitor senior junior mirror mess bit lot person romantic planner perfectionist " +
	"homebody introvert extrovert ambivert christian vegetarian")

// identities are heads of "I'm a <noun>" that make "is a".
var identities = set("woman man girl boy guy person mom mother dad father parent wife husband " +
	"student vegetarian vegan introvert extrovert christian muslim buddhist hindu jew atheist " +
	"feminist grandmother grandfather grandma grandpa homeowner retiree")

// personVerbs following a capitalised run make it a person.
var personVerbs = set("said says told asks asked thinks thought wants wanted loves loved likes " +
	"liked went goes came comes called calls wrote writes lives lived works worked texted " +
	"messaged replied smiled laughed cried and himself herself who")

// speechVerbs after a sentence-initial capitalised word make it a name.
var speechVerbs = set("said says told asked asks texted messaged replied called wrote writes")

// personBefore words preceding a capitalised run make it a person.
var personBefore = set("hey hi hello thanks thank dear with met meet named called miss bro sis " +
	"congrats congratulations")

// placeBefore words preceding a capitalised run make it a place.
var placeBefore = set("in at to from near visited visit around across into")

// talkTo verbs make the object of "to"/"from" a person ("I talked to Anna").
var talkTo = set("talk talked talking spoke speak speaking said say listen listened wrote write " +
	"writing reached introduced married sent send gave give told reply replied tell telling " +
	"letter message text gift call called calling thanks")

// titles inside a capitalised run make it a person.
var titles = set("mr mr. mrs mrs. ms ms. dr dr. miss aunt uncle grandma grandpa sir madam")

// orgSuffixes ending a capitalised run make it an organisation.
var orgSuffixes = set("inc inc. corp corp. ltd ltd. llc co co. company corporation university " +
	"college school institute bank group club foundation association society academy hospital " +
	"church agency labs studio studios team")

// orgPrefixes beginning a capitalised run of several words make it an organisation ("Bank of
// America").
var orgPrefixes = set("bank university college institute school academy church company")

// nameStarts are common words that begin many names ("New York", "The Beatles"); they are kept
// at the start of a name of several words.
var nameStarts = set("new good big little old north south east west great united saint st san " +
	"los las la mount lake fort royal national grand central")

// nameLinks may join two capitalised words into one name ("Bank of America").
var nameLinks = set("of de da del della van von du la le the &")

// Word lists of the topics ("talks about", see [Rules]).
var (
	// topicStop are words that are not topics besides common.txt and the object stop lists:
	// frequent verbs in all their forms, evaluative adjectives, vague nouns, quantities.
	topicStop = set("able ago anymore appreciate appreciated awesome bad beautiful best better big " +
		"bring brings brought busy came care cared cares caring certain chance change changed " +
		"chat chatted chatting check checking come comes coming cool crazy dear definitely " +
		"different difficult doing done easy else enjoy enjoying enough everyday everywhere " +
		"excited exciting experience experiences fantastic favorite favourite feel feeling " +
		"feelings feels felt fine found fun gave get gets getting give giving glad gone gonna " +
		"good gorgeous got gotta great guess guys happen happened happening happens happy hard " +
		"hear heard help helped helping helps high hold holding hope hoped hopes hoping huge " +
		"idea ideas important impressive incredible inspiring interesting keep keeping keeps " +
		"kept knew know knowing known knows lately least let lets life little long look looked " +
		"looking looks lot lots love loved loves loving lucky made make makes making man mean " +
		"means meant mind miss missed moment moments much need needed needs nice nope okay " +
		"others part people person place places plan planning plans pretty proud put puts " +
		"putting quite ready real really reminds right sad said saw say saying says seeing seem " +
		"seemed seems seen sense set share shared sharing short show showed showing shows " +
		"similar small someday something sometime sorry sound sounded sounds special start " +
		"started starting starts stay stayed staying step stuff super sure take takes taking " +
		"talk talked talking tell telling things think thinking thinks thought thoughts tho " +
		"time times tips told took tough tried tries try trying type use used using usual " +
		"wanna want wanted wanting wants watch way ways whole wish wonder wonderful word words " +
		"work worked working works world worth wow yeah year years young " +
		"ya yep yup hey gosh sweet cute amazing fab blast totally truly kinda sorta " +
		"photo pic pics picture pictures image snap shot " +
		"thank thanks cheers congrats congratulations " +
		"couple few many several lots plenty bunch " +
		"kind kinds sort sorts bit bits piece pieces stuff etc " +
		"understand understood remember remind reminded forget forgot forgotten express matter " +
		"matters speak spoke spoken worry worries push pushing give grow grew grown continue " +
		"connect decide quit focus lend pass build built become became believe allow manage " +
		"happen include involve provide suggest realize realise seem appear wait hang " +
		"tricky thankful grateful helpful wild scary powerful crucial vital essential hectic " +
		"refreshing awful terrible horrible stressful peaceful meaningful key top front " +
		"issue issues bummer load loads letting often seldom later again " +
		"ate fed led ran sat won lost bought caught taught fought brought wore drew grew threw " +
		"flew knew rode wrote broke chose woke drove rose shook began sang swam drank hid bit " +
		"lit dug hung stuck sent spent lent slept swept felt meant left paid sold held stood " +
		"read")

	// topicNouns are words of common.txt (never names) that can be topics.
	topicNouns = set("building cooking drawing hiking husband kids learning meeting mom dad " +
		"music painting parents reading running walking wife writing teaching")

	// auxiliary make an -ing form after them a verb ("was thinking").
	auxiliary = set("is are was were be been am i'm we're you're they're he's she's it's " +
		"keep keeps kept start started stop stopped")

	// verbBefore are words after which a word is a verb: subject pronouns, modals and their
	// negations. Not "to": "listen to music", "go to therapy".
	verbBefore = set("i we you they he she i'll we'll you'll they'll i'd we'd you'd they'd " +
		"can can't cannot could couldn't will won't would wouldn't should shouldn't must might " +
		"may don't doesn't didn't let's never")

	// notAdverbs end in -ly but are nouns or adjectives that can be topics.
	notAdverbs = set("family italy july rally belly jelly bully lily holy assembly supply " +
		"butterfly anomaly monopoly melancholy ally reply")

	// notPlurals end in -s but are not plurals.
	notPlurals = set("news series species glasses clothes jeans pants shorts scissors " +
		"lens bus gas yes this has was does goes always perhaps besides sometimes " +
		"christmas texas paris athens mathematics physics politics economics ethics " +
		"gymnastics athletics aerobics pilates diabetes herpes measles mumps chess")

	// ieNouns end in -ie: their plural is not a -y word's ("movies", not "movys").
	ieNouns = set("movie cookie zombie selfie brownie smoothie hippie rookie genie calorie " +
		"prairie goalie newbie sweetie auntie bestie freebie hoodie indie foodie roomie birdie " +
		"pixie rookie veggie aussie")

	// irregularPlurals are plurals that do not end in -s.
	irregularPlurals = map[string]string{
		"children": "child", "kids": "kid", "people": "person", "men": "man", "women": "woman",
		"feet": "foot", "teeth": "tooth", "mice": "mouse", "geese": "goose", "wolves": "wolf",
		"knives": "knife", "wives": "wife", "shelves": "shelf", "loaves": "loaf", "halves": "half",
		"calves": "calf", "scarves": "scarf",
		"potatoes": "potato", "tomatoes": "tomato", "heroes": "hero",
	}

	// hanStopWords are Chinese keywords that are not topics: pronouns, function words, vague
	// nouns and frequent verbs.
	hanStopWords = set("我 你 他 她 它 我们 你们 他们 她们 它们 自己 大家 这 那 这个 那个 这些 那些 " +
		"这里 那里 什么 怎么 为什么 哪里 哪 谁 的 了 着 过 是 有 没有 在 和 跟 与 或者 但是 因为 所以 " +
		"然后 而且 如果 虽然 就 也 都 还 很 太 非常 真的 一下 一些 一个 时候 今天 明天 昨天 现在 " +
		"东西 事情 觉得 知道 喜欢 想 要 会 能 可以 说 做 去 来 看 好 不错 感觉 已经 一直 应该 " +
		"最近 周末 以前 以后 后来 去年 今年 明年 上周 下周 这周 早上 上午 中午 下午 晚上 刚才 " +
		"开始 希望 需要 真是 其实 当然 特别 比较")
)
