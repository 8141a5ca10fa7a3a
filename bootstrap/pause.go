package bootstrap

import "strings"

// defaultECRAccount serves the commercial regions that have no account of their own.
const defaultECRAccount = "602401143452"

// ecrAccounts maps a region to the ECR account that hosts the EKS pause image there
// (bootstrap.sh's get-ecr-uri.sh table). Regions not listed use a pattern fallback.
var ecrAccounts = map[string]string{
	"ap-east-1":       "800184023465",
	"ap-east-2":       "533267051163",
	"me-south-1":      "558608220178",
	"cn-north-1":      "918309763551",
	"cn-northwest-1":  "961992271922",
	"us-gov-west-1":   "013241004608",
	"us-gov-east-1":   "151742754352",
	"us-iso-west-1":   "608367168043",
	"us-iso-east-1":   "725322719131",
	"us-isob-east-1":  "187977181151",
	"us-isob-west-1":  "321162350305",
	"eu-isoe-west-1":  "249663109785",
	"eusc-de-east-1":  "877088126301",
	"us-isof-south-1": "676585237158",
	"us-isof-east-1":  "171035529773",
	"af-south-1":      "877085696533",
	"ap-southeast-3":  "296578399912",
	"me-central-1":    "759879836304",
	"eu-south-1":      "590381155156",
	"eu-south-2":      "455263428931",
	"eu-central-2":    "900612956339",
	"ap-south-2":      "900889452093",
	"ap-southeast-4":  "491585149902",
	"il-central-1":    "066635153087",
	"ca-west-1":       "761377655185",
	"ap-southeast-5":  "151610086707",
	"ap-southeast-6":  "333609536671",
	"ap-southeast-7":  "121268973566",
	"mx-central-1":    "730335286997",
	"ap-northeast-1":  defaultECRAccount,
	"ap-northeast-2":  defaultECRAccount,
	"ap-northeast-3":  defaultECRAccount,
	"ap-south-1":      defaultECRAccount,
	"ap-southeast-1":  defaultECRAccount,
	"ap-southeast-2":  defaultECRAccount,
	"ca-central-1":    defaultECRAccount,
	"eu-central-1":    defaultECRAccount,
	"eu-north-1":      defaultECRAccount,
	"eu-west-1":       defaultECRAccount,
	"eu-west-2":       defaultECRAccount,
	"eu-west-3":       defaultECRAccount,
	"sa-east-1":       defaultECRAccount,
	"us-east-1":       defaultECRAccount,
	"us-east-2":       defaultECRAccount,
	"us-west-1":       defaultECRAccount,
	"us-west-2":       defaultECRAccount,
}

// ecrFallbacks serve regions missing from ecrAccounts, by prefix, in order: the account
// and the region whose registry is used instead. Longer prefixes come first.
var ecrFallbacks = []struct{ prefix, account, region string }{
	{"us-gov-", "013241004608", "us-gov-west-1"},
	{"cn-", "961992271922", "cn-northwest-1"},
	{"us-isob-", "187977181151", "us-isob-east-1"},
	{"us-isof-", "676585237158", "us-isof-south-1"},
	{"us-iso-", "725322719131", "us-iso-east-1"},
	{"eu-isoe-", "249663109785", "eu-isoe-west-1"},
	{"eusc-", "877088126301", "eusc-de-east-1"},
}

// ecrRegistry returns the account and region of the ECR registry with the EKS images
// for region. An explicit account keeps the node's own region.
func ecrRegistry(region, account string) (string, string) {
	if account != "" {
		return account, region
	}
	if a, ok := ecrAccounts[region]; ok {
		return a, region
	}
	for _, f := range ecrFallbacks {
		if strings.HasPrefix(region, f.prefix) {
			return f.account, f.region
		}
	}
	return defaultECRAccount, "us-west-2"
}

// ECRHost returns the registry host name, e.g. 602401143452.dkr.ecr.us-west-2.amazonaws.com,
// or its ecr-fips form.
func ECRHost(account, region, domain string, fips bool) string {
	svc := "ecr"
	if fips {
		svc = "ecr-fips"
	}
	return account + ".dkr." + svc + "." + region + "." + domain
}

// PauseImage returns the pause (sandbox) image reference: PAUSE_CONTAINER_IMAGE, or the
// region's EKS registry's eks/pause, with the tag. fipsHost tells whether the FIPS
// registry host resolves (only asked on FIPS-enabled hosts).
func PauseImage(c *Config, region, domain string, fipsHost bool) string {
	repo := c.PauseContainerImage
	if repo == "" {
		account, reg := ecrRegistry(region, c.PauseContainerAccount)
		repo = ECRHost(account, reg, domain, fipsHost) + "/eks/pause"
	}
	return repo + ":" + c.PauseContainerVersion
}
