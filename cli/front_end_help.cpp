#include "cli/front_end_help.hpp"

#include <map>

namespace cairn {
namespace {

constexpr std::string_view kSqueue = R"(Usage: squeue [OPTIONS...]

View the jobs in the Cairn scheduling queue: pending, running, suspended and
completing jobs. Jobs that ended show with -t (their state, or "all") for
MinJobAge= seconds after their end. The default format is Slurm's
"%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R".

Options:
  -j, --jobs=job_id[,job_id...]  the jobs (or job array tasks, 12_3) to show
  -u, --user=user[,user...]      the jobs of these users
      --me                       the jobs of the calling user
  -n, --name=name[,name...]      the jobs with these names
  -p, --partition=part[,part...] the jobs of these partitions
  -t, --states=state[,state...]  the jobs in these states (PD, R, S, CG, CD, F, TO,
                                 OOM, ... or their names); "all" for every state
  -o, --format=format            the output format (Slurm's %-fields: %i %j %P %u
                                 %t %T %M %l %D %C %m %R %r %V %S %e %b ...)
  -l, --long                     the long format
  -h, --noheader                 no header line
  -r, --array                    one line per job array task
  -s, --steps                    the job steps (srun) instead of the jobs
      --at=time                  the queue as the event log says it was at that time
                                 (ISO 8601: 2026-11-23T10:00:00)
      --conf=file                the configuration (else $CAIRN_CONF, else
                                 /etc/cairn/cairn.conf)
      --help                     show this help and exit
  -V, --version                  print the version and exit
)";

// Slurm 22.05's src/sdiag/opts.c, _help().
constexpr std::string_view kSdiag = R"(Usage: sdiag [OPTIONS]
  -a, --all           all statistics
  -r, --reset         reset statistics
  -M, --cluster       direct the request to a specific cluster
  -i, --sort-by-id    sort RPCs by id
  -t, --sort-by-time  sort RPCs by total run time
  -T, --sort-by-time2 sort RPCs by average run time
  -V, --version       display current version number

Help options:
  --help          show this help message
  --usage         display brief usage message
)";

constexpr std::string_view kSinfo = R"(Usage: sinfo [OPTIONS...]

View the Cairn partitions and nodes: their state, time limit and nodes, one line
per partition and node state (or per node with -N).

Options:
  -N, --Node                     one line per node
  -o, --format=format            the output format (Slurm's %-fields: %P %a %l %D
                                 %t %T %N %c %f %E %U %H)
  -h, --noheader                 no header line
  -R, --list-reasons             why nodes are down, drained or failing, who said
                                 so and when
  -T, --reservation              the reservations (scontrol create reservation)
  -p, --partition=part[,part...] these partitions only
      --at=time                  the cluster as the event log says it was at that
                                 time (ISO 8601)
      --conf=file                the configuration (else $CAIRN_CONF, else
                                 /etc/cairn/cairn.conf)
      --help                     show this help and exit
  -V, --version                  print the version and exit
)";

constexpr std::string_view kScancel = R"(Usage: scancel [OPTIONS...] [job_id[_array_id][.step_id]...]

Cancel pending, running or suspended jobs, job array tasks or job steps, or send
them a signal. With filters and no ids, every job that matches them all.

Options:
  -s, --signal=name|number       send this signal instead of cancelling (to the
                                 batch shell and the steps)
  -u, --user=user[,user...]      the jobs of these users
  -n, --name=name[,name...]      the jobs with these names
  -t, --state=state[,state...]   the jobs in these states (PENDING, RUNNING,
                                 SUSPENDED)
  -p, --partition=part[,part...] the jobs of these partitions
  -q, --quiet                    accepted as Slurm's
      --conf=file                the configuration (else $CAIRN_CONF, else
                                 /etc/cairn/cairn.conf)
  -h, --help                     show this help and exit
  -V, --version                  print the version and exit
)";

constexpr std::string_view kSacct = R"(Usage: sacct [OPTIONS...]

Show the accounting data of jobs and job steps, from the controller's job
history (jobs purged from the queue included). Without -j, -u or -a, only the
calling user's jobs (root sees every user's).

Options:
  -j, --jobs=job_id[,job_id...]  these jobs (or job array tasks)
  -u, --user=user[,user...]      the jobs of these users
  -a, --allusers                 every user's jobs
  -s, --state=state[,state...]   the jobs that were in these states (CD, F, TO,
                                 OOM, CA, NF, PD, R, ...)
      --name=name[,name...]      the jobs with these names
  -S, --starttime=time           jobs that had not ended by this time
  -E, --endtime=time             jobs submitted before this time
  -X, --allocations              the jobs only, not their steps
  -D, --duplicates               every run of a requeued or resubmitted job
  -o, --format=field[%N][,...]   the fields to show (JobID, JobName, Partition,
                                 Account, AllocCPUS, State, ExitCode, Elapsed,
                                 Start, End, NodeList, Restarts, ...)
  -P, --parsable2                '|' between the fields, no padding
  -p, --parsable                 '|' after every field, no padding
  -n, --noheader                 no header lines
      --conf=file                the configuration (else $CAIRN_CONF, else
                                 /etc/cairn/cairn.conf)
  -h, --help                     show this help and exit
  -V, --version                  print the version and exit
)";

constexpr std::string_view kScontrol = R"(Usage: scontrol [OPTIONS...] COMMAND [ARGUMENTS...]

View or modify the Cairn controller's state: show jobs, steps, nodes, partitions
and burst buffers, and hold, release, requeue, suspend or resume jobs. Verbs print
nothing on success and Slurm's error on failure. Keywords may be abbreviated and
options given anywhere on the line, as with Slurm's scontrol.

Commands:
  show job|jobid [job_id]        jobs, in Slurm's Key=Value layout (show job=12 too)
  show step [job_id[.step_id]]   running job steps
  show node [name[,name...]]     nodes
  show partition [name]          partitions
  show reservation [name]        reservations
  show licenses [name]           licenses: total, used, free
  show burstbuffer               burst-buffer pools, their use and holders
  show hostnames [hostlist]      one name a line (default: $SLURM_NODELIST)
  show hostlist|hostlistsorted list
                                 the names (or /file of names) as a hostlist
  hold|uhold job_list            keep pending jobs from starting
  release job_list               let held jobs start
  requeue|requeuehold job_list   requeue jobs (and hold them)
  suspend|resume job_list        stop and continue running jobs
  update NodeName=nodes State=DRAIN|RESUME|DOWN|IDLE|UNDRAIN|FAIL Reason=text
                                 drain, down or return nodes (operators)
  update JobId=id Key=value...   change a job (TimeLimit, Priority, Nice, Name,
                                 Comment, Partition, NumNodes, StartTime, ...)
  create reservation StartTime=time Duration=time|EndTime=time Nodes=list|NodeCnt=n
         Users=list|Accounts=list [ReservationName=name] [PartitionName=name]
         [Flags=MAINT,IGNORE_JOBS,OVERLAP,DAILY,WEEKLY,HOURLY,...]
                                 reserve nodes for a time (operators)
  update ReservationName=name Key=value...
                                 change a reservation (Flags+=, Flags-= too)
  delete ReservationName=name    delete a reservation
  top job_list                   put pending jobs ahead of their owner's others
  ping                           whether the controller answers
  show config                    the controller's running configuration
  show daemons                   the daemons this host runs (slurmctld slurmd)
  reconfigure                    re-read cairn.conf without a restart (operators)
  setdebug level                 the controller's log level: quiet, fatal, error,
                                 info, verbose, debug, debug2..debug5 (operators)
  write batch_script job_id [file]
                                 the job's script to file (default slurm-<id>.sh;
                                 "-": standard output): its owner and operators
  listpids [job_id[.step_id]]    the job processes on this host
  version                        print the version

Options:
  -o, --oneliner                 one line per record
  -d, --details                  more details (DerivedExitCode=)
  -Q, --quiet                    no "not found" messages
      --at=time                  show what the event log says was so at that time
                                 (ISO 8601)
      --conf=file                the configuration (else $CAIRN_CONF, else
                                 /etc/cairn/cairn.conf)
  -h, --help                     show this help and exit
  -V, --version                  print the version and exit
)";

constexpr std::string_view kSrun = R"(Usage: srun [OPTIONS...] executable [args...]

Run a parallel job step: inside a job's allocation (in a batch script, or with
--jobid) its tasks run on the job's nodes; elsewhere srun first asks for an
allocation of its own, waits for it and runs the step in it. The tasks' output
comes back to srun's.

Options:
  -n, --ntasks=n                 the number of tasks
  -N, --nodes=n                  the number of nodes
  -c, --cpus-per-task=n          CPUs per task
      --cpu-bind=type            CPU binding (none, rank, map_cpu:list,
                                 mask_cpu:list; verbose,...)
      --mem=size[K|M|G|T]        memory per node
  -J, --job-name=name            the step's (and the allocation's) name
  -p, --partition=partition      the partition of a new allocation
  -t, --time=time                the time limit of a new allocation
  -A, --account=name             the account of a new allocation
  -w, --nodelist=hosts           nodes a new allocation must include
  -x, --exclude=hosts            nodes a new allocation must not include
  -C, --constraint=list          node features a new allocation needs
  -D, --chdir=path               the tasks' working directory
      --export=ALL|NONE|vars     the environment the tasks get
      --jobid=id                 run in this job's allocation
  -l, --label                    prefix output lines with the task number
  -u, --unbuffered               pass output on as it comes
  -Q, --quiet                    no informational messages
      --overlap, --exact, --mpi=type   accepted as Slurm's
      --conf=file                the configuration (else $CAIRN_CONF, else
                                 /etc/cairn/cairn.conf)
  -h, --help                     show this help and exit
  -V, --version                  print the version and exit
)";

constexpr std::string_view kSbatchLongrun =
    R"(Usage: sbatch_longrun [--max-restarts N] [--detached] [--use-verbosity LEVEL] <sbatch args>

Submit a batch job (with sbatch's options and script) that the controller resubmits
when it ends in a state of --resubmit-on (by default TIMEOUT, DEADLINE, PREEMPTED,
NODE_FAIL, REVOKED), at most N times. Unless --detached, follow the job and report
each attempt until it is final; the controller keeps resubmitting even if this
command or the login session dies.

Options:
      --max-restarts=N           resubmit at most N times (default 10)
      --detached                 print the job id and return at once
      --use-verbosity=LEVEL      DEFAULT, VERBOSE or SILENT
  -h, --help                     show this help and exit
  -V, --version                  print the version and exit
  everything else                passed to sbatch (see sbatch --help)
)";

// Slurm 22.05's own text (src/sstat/options.c, _help_msg), byte for byte.
constexpr std::string_view kSstat = R"SSTAT(sstat [<OPTION>] -j <job(.stepid)>                                          
    Valid <OPTION> values are:                                              
      -a, --allsteps:                                                       
                   Print all steps for the given job(s) when no step is     
                   specified.                                               
      -e, --helpformat:                                                     
	           Print a list of fields that can be specified with the    
	           '--format' option                                        
     -h, --help:   Print this description of use.                           
     -i, --pidformat:                                                       
                   Predefined format to list the pids running for each      
                   job step.  (JobId,Nodes,Pids)                            
     -j, --jobs:                                                            
	           Format is <job(.step)>. Stat this job step               
                   or comma-separated list of job steps. This option is     
                   required.  The step portion will default to the lowest   
                   numbered (not batch, extern, etc) step running if not    
                   specified, unless the --allsteps flag is set where not   
                   specifying a step will result in all running steps       
                   to be displayed. A step id of 'batch' will display the   
                   information about the batch step. A step id of 'extern'  
                   will display the information about the extern step       
                   when using PrologFlags=contain.                          
     -n, --noheader:                                                        
	           No header will be added to the beginning of output.      
                   The default is to print a header.                        
     --noconvert:  Don't convert units from their original type             
		   (e.g. 2048M won't be converted to 2G).                   
     -o, --format:                                                          
	           Comma separated list of fields. (use "--helpformat"    
                   for a list of available fields).                         
     -p, --parsable: output will be '|' delimited with a '|' at the end     
     -P, --parsable2: output will be '|' delimited without a '|' at the end 
     --usage:      Display brief usage message.                             
     -v, --verbose:                                                         
	           Primarily for debugging purposes, report the state of    
                   various variables during processing.                     
     -V, --version: Print version.                                          

)SSTAT";

}  // namespace

std::string_view front_end_help(std::string_view program) {
  static const std::map<std::string_view, std::string_view> kTexts = {
      {"squeue", kSqueue}, {"sinfo", kSinfo}, {"scancel", kScancel}, {"sacct", kSacct},
      {"scontrol", kScontrol}, {"srun", kSrun}, {"sbatch_longrun", kSbatchLongrun}, {"sdiag", kSdiag},
      {"sstat", kSstat},
  };
  auto found = kTexts.find(program);
  return found == kTexts.end() ? std::string_view() : found->second;
}

}  // namespace cairn
